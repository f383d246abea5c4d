"""Self-play training of Matador agents (run from the checkout: ``python -m train``)."""
