"""Ground truth the tests (and the calibration bench, from a source checkout) use, kept out
of the product: faulty endpoint customers (``faulty_user``), agents (``faulty_agent``) and
judges (``faulty_judges``), served by the test endpoint once it loads ``faulty``."""
