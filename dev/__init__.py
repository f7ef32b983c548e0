"""What measures tauray itself; outside the installed package."""
