"""The static HTML report of a run or sweep folder."""
