"""``python -m train --help`` lists every argument with its documentation."""

from matador_env.streams import run_main

from .run import main

if __name__ == "__main__":
    run_main(main)
