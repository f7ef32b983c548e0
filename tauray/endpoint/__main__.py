import sys

from tauray.endpoint.launcher import main

sys.exit(main())
