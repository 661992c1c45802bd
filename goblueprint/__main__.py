import sys

from goblueprint.cli import main

sys.exit(main(sys.argv[1:]))
