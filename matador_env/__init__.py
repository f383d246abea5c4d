"""matador-env: rules engine, RL environments and bots for Matador dominoes."""

__version__ = "0.1.0"
