from copygram.cli import main

raise SystemExit(main())
