import sys

from tauray.actors.endpoint.launcher import main

sys.exit(main())
