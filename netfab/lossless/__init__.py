"""Lossless-Ethernet physics shared by lint, render and analyze: PFC headroom and ECN threshold bounds.

Pure functions of numbers (no intent, no platform files), so every stage computes the same bytes.
"""
