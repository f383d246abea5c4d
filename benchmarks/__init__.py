"""Benchmarks of the engine, the environments, the bots, training and strength;
their command lines share the number flags of :mod:`matador_env.flags`."""
