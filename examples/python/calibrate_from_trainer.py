"""A Hugging Face Trainer run against trainplan's estimate of it.

The model comes from its config (`transformers.AutoConfig.from_pretrained(...).to_dict()`, or the config.json
beside the weights), the run's size and speed from the metrics `Trainer.train()` returns. The estimate is asked
for the job the run was, and its step time, throughput and peak memory are set beside the measured ones:

    python3 examples/python/calibrate_from_trainer.py config.json metrics.json \\
        --gpu a100-80gb-sxm --gpus 8 --method lora --seq-len 2048 --micro-batch 4 --grad-accum 4

In a training script, with the objects at hand:

    import calibrate_from_trainer as c
    job = c.TrainerJob(gpu="a100-80gb-sxm", gpus=8, method="lora", seq_len=2048, micro_batch=4, grad_accum=4)
    measured = c.measured_from_trainer(train_result.metrics, job, torch.cuda.max_memory_reserved())
    print(c.format_comparison(c.compare(job, model.config.to_dict(), measured)))
    fit = c.calibrate(job, model.config.to_dict(), measured)   # the factors this run determines

`measured` holds the figures under the names `trainplan calibrate` takes (step_time_s, tokens_per_s,
peak_reserved_gib), so fitting the efficiency factors to this run is one call with the same request. With
`--save FILE` the script writes the calibration file; in ~/.config/trainplan/ later estimates use it.
Needs only the `trainplan` module (PYTHONPATH=build/python after `make`, or pip install ./python).
"""
import argparse
import dataclasses
import json
import sys

import trainplan

GIB = 1024**3


@dataclasses.dataclass
class TrainerJob:
    """What the Trainer was told: TrainingArguments and the launcher's GPU count."""
    gpu: str                    # trainplan's name for the GPU (`trainplan gpus`)
    gpus: int                   # world size
    method: str = "full"        # full | lora | qlora
    seq_len: int = 2048         # max_seq_length / the tokenizer's truncation length
    micro_batch: int = 1        # per_device_train_batch_size
    grad_accum: int = 1         # gradient_accumulation_steps
    precision: str = "bf16"
    framework: str = "hf"       # plain Trainer; "deepspeed" or "fsdp" when TrainingArguments names them
    zero: int = 0               # the DeepSpeed ZeRO stage (0: plain data parallelism)
    tokens_per_sample: int = 0  # mean tokens a sample holds; 0: seq_len (packed or padded to length)
    lora_rank: int = 16


def estimate_request(job, config, tokens):
    """The request document trainplan.estimate takes, with the model given by its Hugging Face config."""
    name = config.get("_name_or_path") or config.get("model_type", "model")
    training = {"method": job.method, "precision": job.precision, "framework": job.framework,
                "seq_len": job.seq_len, "micro_batch": job.micro_batch,
                "global_batch": job.micro_batch * job.grad_accum * job.gpus, "tokens": tokens}
    if job.method != "full":
        training["lora_rank"] = job.lora_rank
    if job.tokens_per_sample:
        training["sample_mean_tokens"] = job.tokens_per_sample
    return {"model": {"config": config, "name": name}, "training": training,
            "hardware": {"gpu": job.gpu, "gpus": job.gpus}, "strategy": {"zero": job.zero}}


def measured_from_trainer(metrics, job, peak_reserved_bytes=None):
    """The Trainer's metrics (train_runtime, train_samples_per_second, train_steps_per_second, over all GPUs)
    as the figures an estimate states. A Trainer step is an optimizer step: every GPU's micro-batches times
    the accumulation steps."""
    tokens_per_sample = job.tokens_per_sample or job.seq_len
    samples = metrics["train_samples_per_second"] * metrics["train_runtime"]
    measured = {"training_s": metrics["train_runtime"],
                "step_time_s": 1.0 / metrics["train_steps_per_second"],
                "tokens_per_s": metrics["train_samples_per_second"] * tokens_per_sample,
                "tokens": samples * tokens_per_sample}
    if peak_reserved_bytes is not None:
        measured["peak_reserved_gib"] = peak_reserved_bytes / GIB
    return measured


# What an estimate states of each measured figure: its place in the estimate's answer and the factor to the
# measured unit.
FIGURES = [("step_time_s", ("time", "step_s"), 1.0),
           ("tokens_per_s", ("time", "tokens_per_s"), 1.0),
           ("training_s", ("time", "training_s"), 1.0),
           ("peak_reserved_gib", ("memory", "per_gpu_bytes"), 1.0 / GIB)]


def compare(job, config, measured):
    """The estimate of the run beside each measured figure: rows of (figure, estimated, measured, error), the
    error being (estimated - measured) / measured."""
    estimate = trainplan.estimate(estimate_request(job, config, measured["tokens"]))
    rows = []
    for name, (section, key), factor in FIGURES:
        if name in measured:
            estimated = estimate[section][key] * factor
            rows.append((name, estimated, measured[name], (estimated - measured[name]) / measured[name]))
    return rows


CALIBRATE_FIGURES = ("step_time_s", "tokens_per_s", "peak_reserved_gib")


def calibrate(job, config, measured):
    """trainplan.calibrate on this run: the factors it determines (compute from the step time, the allocator
    overhead from the peak reserved memory; communication needs runs of different shapes), each run's error
    before and after, and under "file" the calibration file to save."""
    run = {"scenario": estimate_request(job, config, measured["tokens"]),
           "measured": {k: measured[k] for k in CALIBRATE_FIGURES if k in measured}}
    return trainplan.calibrate({"runs": [run]})


def format_fit(fit):
    lines = []
    for group in fit["groups"]:
        for name, factor in group["factors"].items():
            text = f"x{factor['value']:.3f}" if factor["fitted"] else factor["reason"]
            lines.append(f"{group['name']}: {name} {text}")
    return "\n".join(lines)


def format_comparison(rows):
    lines = [f"{'figure':<20}{'estimated':>14}{'measured':>14}{'error':>9}"]
    lines += [f"{name:<20}{est:>14.4g}{meas:>14.4g}{err:>+9.1%}" for name, est, meas, err in rows]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("config", help="AutoConfig(...).to_dict() or config.json, as a JSON file")
    parser.add_argument("metrics", help="the Trainer's train metrics, as a JSON file")
    parser.add_argument("--peak-reserved-gib", type=float, help="torch.cuda.max_memory_reserved() in GiB")
    parser.add_argument("--save", help="write the calibration file here (e.g. ~/.config/trainplan/calibration.json)")
    for field in dataclasses.fields(TrainerJob):
        flag = "--" + field.name.replace("_", "-")
        if field.default is dataclasses.MISSING:
            parser.add_argument(flag, type=field.type, required=True)
        else:
            parser.add_argument(flag, type=type(field.default), default=field.default)
    args = parser.parse_args(argv)
    job = TrainerJob(**{f.name: getattr(args, f.name) for f in dataclasses.fields(TrainerJob)})
    with open(args.config) as f:
        config = json.load(f)
    with open(args.metrics) as f:
        metrics = json.load(f)
    peak = args.peak_reserved_gib * GIB if args.peak_reserved_gib is not None else None
    measured = measured_from_trainer(metrics, job, peak)
    try:
        rows = compare(job, config, measured)
        fit = calibrate(job, config, measured)
    except trainplan.InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(format_comparison(rows))
    print(format_fit(fit))
    if args.save:
        with open(args.save, "w") as f:
            json.dump(fit["file"], f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
