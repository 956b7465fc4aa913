"""The tree toolkit: storage and compiled steps every tree plugin shares (scalable node
weights, sparse per-node label statistics, top-k, descent and update rules)."""
