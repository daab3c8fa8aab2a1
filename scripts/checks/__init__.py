"""Checks run by hand: on a GPU machine, and the mutation audit of the tests."""
