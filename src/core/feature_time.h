#pragma once
// Time costs of the memory-saving features, as pure formulas (perf.cc applies them to a step;
// docs/performance.md "Memory features: their time").

namespace trainplan {

/// Seconds activation offloading adds to one micro-batch over `layers` layers: each layer's `bytes_per_layer`
/// leave for host RAM during its forward and return during its backward on a copy stream beside the compute
/// (torchtune OffloadActivations, Unsloth's non-blocking copies), so a layer waits only for the part of its
/// transfer that outlasts its own pass: layers x (max(0, T - fwd) + max(0, T - bwd)), T = bytes / host-link rate.
double ActivationOffloadSeconds(double bytes_per_layer, double layers, double host_link_bytes_per_s, double layer_fwd_s,
                                double layer_bwd_s);

/// Seconds a paged optimizer's spilled states cost per step: bitsandbytes prefetches each state into the GPU
/// before its update and synchronises (no overlap with compute); the driver evicts as many pages the other way to
/// make room, concurrently on the full-duplex link, so the spilled bytes take spill / migration rate. Zero while
/// they fit.
double PagedOptimizerSeconds(double spill_bytes, double migration_bytes_per_s);

/// DoRA's weight norm for one adapted linear [in -> out] in one forward (PEFT DoraLinearLayer): B @ A built by
/// running an [in, in] identity through lora_A then lora_B, added to the (dequantised) base weight, normed
/// row-wise. Independent of the tokens.
struct DoraNormCost {
  double eye_flops = 0;     // lora_A over the identity: 2 in^2 r
  double delta_flops = 0;   // lora_B over that: the B @ A product, 2 in r out
  double bytes = 0;         // identity written (and cast), weight-sized elementwise passes, dequantisation
};
DoraNormCost DoraWeightNorm(double in, double out, double rank, bool fp32_adapters, bool quantised);

/// HBM bytes per output element DoRA adds beyond LoRA's scale-and-add: the magnitude rescaling of the base and
/// adapter outputs, in forward and in backward (fp32 magnitudes promote the products to fp32).
double DoraForwardBytesPerOutput(bool fp32_adapters);
double DoraBackwardBytesPerOutput(bool fp32_adapters);

}  // namespace trainplan
