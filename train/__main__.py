"""``python -m train --help`` lists every argument with its documentation."""

from .run import main

if __name__ == "__main__":
    main()
