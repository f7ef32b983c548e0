"""Benchmarks of tauray against its floors."""
