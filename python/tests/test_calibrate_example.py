"""examples/python/calibrate_from_trainer.py with plain dicts: an AutoConfig(...).to_dict() of Llama-3-8B and the
metrics a Trainer returns (transformers is not needed)."""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

import trainplan

SOURCE = os.environ["TRAINPLAN_SOURCE_DIR"]
EXAMPLE = os.path.join(SOURCE, "examples", "python", "calibrate_from_trainer.py")
spec = importlib.util.spec_from_file_location("calibrate_from_trainer", EXAMPLE)
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)

with open(os.path.join(os.path.dirname(__file__), "fixtures", "llama-3-8b-autoconfig.json")) as f:
    CONFIG = json.load(f)

# A LoRA run on 8 GPUs: 8 x 4 x 4 = 128 samples of 2048 tokens a step, 200 steps in 2,000 s.
JOB = example.TrainerJob(gpu="a100-80gb-sxm", gpus=8, method="lora", seq_len=2048, micro_batch=4, grad_accum=4)
METRICS = {"train_runtime": 2000.0, "train_samples_per_second": 12.8, "train_steps_per_second": 0.1,
           "total_flos": 1.2e18, "train_loss": 1.31, "epoch": 1.0}


class CalibrateFromTrainerTest(unittest.TestCase):
    def test_the_request_carries_the_config_and_the_trainers_batch(self):
        request = example.estimate_request(JOB, CONFIG, 5.24288e7)
        self.assertIs(request["model"]["config"], CONFIG)
        self.assertEqual(request["model"]["name"], "meta-llama/Meta-Llama-3-8B")
        self.assertEqual(request["training"]["global_batch"], 128)
        self.assertEqual(request["training"]["lora_rank"], 16)
        estimate = trainplan.estimate(request)
        # The config dict is counted exactly as the catalog's Llama-3-8B.
        self.assertEqual(estimate["params"]["total"], 8030261248)
        self.assertEqual(estimate["strategy"]["global_batch"], 128)
        self.assertEqual(estimate["strategy"]["grad_accum_steps"], 4)

    def test_the_trainers_metrics_become_the_figures_an_estimate_states(self):
        measured = example.measured_from_trainer(METRICS, JOB, 30 * example.GIB)
        self.assertAlmostEqual(measured["step_time_s"], 10.0)
        self.assertAlmostEqual(measured["tokens_per_s"], 12.8 * 2048)
        self.assertAlmostEqual(measured["tokens"], 12.8 * 2000 * 2048)
        self.assertEqual(measured["training_s"], 2000.0)
        self.assertEqual(measured["peak_reserved_gib"], 30.0)
        self.assertNotIn("peak_reserved_gib", example.measured_from_trainer(METRICS, JOB))

    def test_the_comparison_is_the_estimate_beside_the_measurement(self):
        measured = example.measured_from_trainer(METRICS, JOB, 30 * example.GIB)
        rows = {name: (est, meas, err) for name, est, meas, err in example.compare(JOB, CONFIG, measured)}
        estimate = trainplan.estimate(example.estimate_request(JOB, CONFIG, measured["tokens"]))
        self.assertEqual(set(rows), {"step_time_s", "tokens_per_s", "training_s", "peak_reserved_gib"})
        self.assertEqual(rows["step_time_s"][0], estimate["time"]["step_s"])
        self.assertEqual(rows["peak_reserved_gib"][0], estimate["memory"]["per_gpu_bytes"] / example.GIB)
        est, meas, err = rows["tokens_per_s"]
        self.assertEqual(meas, 12.8 * 2048)
        self.assertAlmostEqual(err, est / meas - 1)
        # The estimate's own steps: the run's tokens over its tokens per step.
        self.assertAlmostEqual(estimate["time"]["steps"], 200, delta=1)

    def test_calibrate_fits_what_one_run_determines_and_the_file_reproduces_the_run(self):
        measured = example.measured_from_trainer(METRICS, JOB, 30 * example.GIB)
        fit = example.calibrate(JOB, CONFIG, measured)
        factors = fit["groups"][0]["factors"]
        self.assertEqual(fit["groups"][0]["name"], "hf on ampere")
        self.assertTrue(factors["compute"]["fitted"])
        self.assertFalse(factors["communication"]["fitted"])
        self.assertIn("cannot determine communication efficiency from 1 run", factors["communication"]["reason"])
        self.assertTrue(factors["allocator_overhead"]["fitted"])
        entry = fit["file"]["efficiency"]["calibrations"][0]
        self.assertEqual(entry["factors"]["compute"], factors["compute"]["value"])
        # The run's step time after the fit, unless the factor ended at its bound.
        if not factors["compute"]["at_bound"]:
            self.assertAlmostEqual(fit["groups"][0]["runs"][0]["error_after"]["step_time"], 0, places=3)

    def test_a_bad_calibrate_request_names_its_field(self):
        for doc, field in [({"runs": 3}, "runs"), ({"runs": []}, "runs"), ({"runs": [], "by": "node"}, "by"),
                           ({"runs": [{"scenario": {"model": "llama-3-8b"}, "measured": {"step_time_s": -1}}]},
                            "runs[0].measured.step_time_s")]:
            with self.subTest(doc=doc):
                with self.assertRaises(trainplan.InputError) as caught:
                    trainplan.calibrate(doc)
                self.assertEqual(caught.exception.field, field)

    def test_the_script_prints_the_table_and_names_bad_input(self):
        with tempfile.TemporaryDirectory() as d:
            config, metrics = os.path.join(d, "config.json"), os.path.join(d, "metrics.json")
            with open(config, "w") as f:
                json.dump(CONFIG, f)
            with open(metrics, "w") as f:
                json.dump(METRICS, f)
            args = [sys.executable, EXAMPLE, config, metrics, "--gpu", "a100-80gb-sxm", "--gpus", "8",
                    "--method", "lora", "--micro-batch", "4", "--grad-accum", "4", "--peak-reserved-gib", "30"]
            run = subprocess.run(args, capture_output=True, text=True)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertIn("step_time_s", run.stdout)
            self.assertIn("peak_reserved_gib", run.stdout)
            self.assertIn("hf on ampere: compute x", run.stdout)
            saved = os.path.join(d, "calibration.json")
            self.assertEqual(subprocess.run(args + ["--save", saved], capture_output=True).returncode, 0)
            with open(saved) as f:
                self.assertEqual(json.load(f)["efficiency"]["calibrations"][0]["engine"], "hf")
            bad = subprocess.run(args[:-4] + ["--method", "loraa"], capture_output=True, text=True)
            self.assertEqual(bad.returncode, 2, bad.stderr)
            self.assertIn("training.method", bad.stderr)


if __name__ == "__main__":
    unittest.main()
