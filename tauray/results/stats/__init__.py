"""Statistics over the tables, one home for every figure: outcomes, metrics, intervals, agreement, analysis helpers and the judges' meta-evaluation."""
