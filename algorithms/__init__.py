"""Non-learned algorithms of the seed papers: replicable_testing (replicable distribution
testers), order_statistics (extreme order statistics), generalization (tight-generalization
diagnostic of any training config), submodular_streaming (streaming stochastic submodular
recommendation with on-demand visits), learning_rules (learning rules derived as optimal
control of a partially observed quadratic landscape), diverse (decentralized
variance-reduced optimistic gradient for finite-sum minimax on torch.distributed), covering
(optimal covering of compact planar sets with n balls by smoothed zeroth-order descent),
kv_compression (BalanceKV: KV-cache compression by vector balancing, with baselines)."""
