from tauray.pipeline.cli import main

raise SystemExit(main())
