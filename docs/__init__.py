"""packproof's guides (this folder's Markdown pages), shipped as package data of
``packproof.docs``: ``packproof docs`` lists them, ``packproof docs TOPIC`` prints one.

A package rather than a bare data folder: setuptools' editable install maps only
folders with an ``__init__.py``, and ``importlib.resources`` reads the pages here
from the repository and from an installed wheel alike.
"""
