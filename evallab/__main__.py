"""``python -m evallab ARGS...``: the ``evallab`` command (:func:`evallab.cli.main`)."""

from evallab.cli import main

if __name__ == "__main__":
    main()
