"""The lessons' calculations: cost formulas (KV size, roofline), lessons, measured lesson runs, the tour's analyses."""
