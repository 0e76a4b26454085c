"""``python -m selfreflect``: the ``selfreflect`` command (:func:`selfreflect.cli.main`)."""

from selfreflect.cli import main

if __name__ == "__main__":
    main()
