"""The ``kaleido`` command: its entry point, parser and one module per command.

``entry`` imports nothing heavy; ``main`` builds the parser over the command
modules, which share ``common`` (output places, errors) and ``options`` (the
knobs' flags). The library (the modules of `sim` itself) imports nothing from here.
"""
