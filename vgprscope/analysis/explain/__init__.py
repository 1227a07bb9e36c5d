"""``explain``: registers per tensor live across each loop, spills by source line, each loop's mix."""
