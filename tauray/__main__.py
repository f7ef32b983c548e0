from tauray.pipeline.cli.main import main

raise SystemExit(main())
