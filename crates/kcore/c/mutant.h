/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The harness's mutant: kernel/stream_core.c and c/shim.c built a second time
 * with one constant changed (SS_BACKWARD_PCT, given on the command line) and
 * every external name prefixed, so that both builds link into one binary and
 * a test can show that the differential check notices the change.
 */
#define ss_params_default		mut_ss_params_default
#define ss_init				mut_ss_init
#define ss_est_flat			mut_ss_est_flat
#define ss_est_rotational		mut_ss_est_rotational
#define ss_est_set			mut_ss_est_set
#define ss_est_forward			mut_ss_est_forward
#define ss_est				mut_ss_est
#define ss_learn_sample			mut_ss_learn_sample
#define ss_learn_fit			mut_ss_learn_fit
#define ss_arrive			mut_ss_arrive
#define ss_decide			mut_ss_decide
#define ss_completed			mut_ss_completed
#define ss_set_queue_depth		mut_ss_set_queue_depth
#define ss_resize			mut_ss_resize
#define ss_absorb			mut_ss_absorb
#define ss_forget			mut_ss_forget
#define ss_front_merge_candidate	mut_ss_front_merge_candidate
#define ss_has_queued			mut_ss_has_queued
#define ss_is_waiting			mut_ss_is_waiting
#define ss_tree_insert			mut_ss_tree_insert
#define ss_tree_erase			mut_ss_tree_erase
#define ss_tree_lower_bound		mut_ss_tree_lower_bound
#define ss_tree_next			mut_ss_tree_next
#define kc_new				mut_kc_new
#define kc_free				mut_kc_free
#define kc_set_est			mut_kc_set_est
#define kc_est				mut_kc_est
#define kc_arrive			mut_kc_arrive
#define kc_decide			mut_kc_decide
#define kc_completed			mut_kc_completed
#define kc_queued			mut_kc_queued
#define kc_stats			mut_kc_stats
#define kc_learn_new			mut_kc_learn_new
#define kc_learn_sample			mut_kc_learn_sample
#define kc_learn_fit			mut_kc_learn_fit
#define kc_learn_est			mut_kc_learn_est
#define kc_learn_free			mut_kc_learn_free
