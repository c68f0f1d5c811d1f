"""The Python module against the binary it is built with: the CLI's --json and `serve`'s HTTP API answer the
same documents with the same JSON. ctest sets PYTHONPATH (the module) and TRAINPLAN_BINARY (the CLI)."""
import json
import os
import subprocess
import sys
import tempfile
import threading
import unittest
import urllib.error
import urllib.request

import trainplan

BINARY = os.environ["TRAINPLAN_BINARY"]
with open(os.path.join(os.path.dirname(__file__), "fixtures", "llama-3-8b-autoconfig.json")) as f:
    LLAMA_3_8B_CONFIG = json.load(f)  # AutoConfig.from_pretrained("meta-llama/Meta-Llama-3-8B").to_dict()

LORA_JOB = {
    "model": "llama-3-8b",
    "training": {"method": "lora", "seq_len": 4096, "micro_batch": 2, "tokens": 2e8},
    "hardware": {"gpu": "a100-80gb-sxm", "gpus": 2},
    "strategy": {"zero": 2},
}


def cli(*args):
    return subprocess.run([BINARY, *args], check=True, capture_output=True, text=True).stdout


def without_search_clock(answer):
    """A plan or recommendation less what differs between two runs of one search (its wall time, its threads)."""
    answer = dict(answer)
    answer.pop("search", None)
    return answer


class Server:
    """`trainplan serve` on a free loopback port for the test's lifetime."""

    def __enter__(self):
        self.process = subprocess.Popen([BINARY, "serve", "--port", "0", "--workers", "2"],
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline()  # "listening on http://127.0.0.1:PORT/ with N search workers"
        self.url = line.split()[2].rstrip("/")
        return self

    def post(self, path, doc):
        request = urllib.request.Request(self.url + path, data=json.dumps(doc).encode(),
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as error:
            return error.code, json.load(error)

    def get(self, path):
        with urllib.request.urlopen(self.url + path, timeout=30) as response:
            return json.load(response)

    def __exit__(self, *exc):
        self.process.terminate()
        self.process.wait(timeout=30)


class EstimateTest(unittest.TestCase):
    def test_equals_the_cli_json_for_the_same_flags(self):
        answer = trainplan.estimate(LORA_JOB)
        from_flags = json.loads(cli("estimate", "--model", "llama-3-8b", "--method", "lora", "--seq-len", "4096",
                                    "--micro-batch", "2", "--tokens", "2e8", "--gpu", "a100-80gb-sxm", "--gpus", "2",
                                    "--zero", "2", "--json"))
        self.assertEqual(answer["memory"]["per_gpu_bytes"], from_flags["memory"]["per_gpu_bytes"])
        self.assertEqual(answer["time"]["step_s"], from_flags["time"]["step_s"])
        self.assertEqual(answer, from_flags)

    def test_equals_the_cli_json_for_the_same_scenario_file(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json") as scenario:
            json.dump(LORA_JOB, scenario)
            scenario.flush()
            self.assertEqual(trainplan.estimate(LORA_JOB), json.loads(cli("estimate", scenario.name, "--json")))

    def test_a_hugging_face_config_object_is_read_like_the_catalog_model(self):
        catalog = trainplan.estimate(LORA_JOB)
        from_config = trainplan.estimate({**LORA_JOB, "model": {"config": LLAMA_3_8B_CONFIG, "name": "my-llama"}})
        self.assertEqual(from_config["params"]["total"], catalog["params"]["total"])
        self.assertEqual(from_config["memory"]["per_gpu_bytes"], catalog["memory"]["per_gpu_bytes"])
        self.assertEqual(from_config["model"]["name"], "my-llama")

    def test_a_config_path_is_read_as_the_cli_reads_it(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            json.dump(LLAMA_3_8B_CONFIG, f)
            f.flush()
            answer = trainplan.estimate({**LORA_JOB, "model": {"config_path": f.name}})
        self.assertEqual(answer["params"]["total"], trainplan.estimate(LORA_JOB)["params"]["total"])

    def test_numpy_like_scalars_are_taken_through_tolist(self):
        class Scalar:  # what numpy.int64(2) offers: not an int, but tolist() gives one
            def __init__(self, value):
                self.value = value

            def tolist(self):
                return self.value

        job = json.loads(json.dumps(LORA_JOB))
        job["hardware"]["gpus"] = Scalar(2)
        self.assertEqual(trainplan.estimate(job), trainplan.estimate(LORA_JOB))
        job["hardware"]["gpus"] = object()
        with self.assertRaises(TypeError):
            trainplan.estimate(job)


class InputErrorTest(unittest.TestCase):
    def test_names_the_field_path_the_value_and_what_is_allowed(self):
        job = json.loads(json.dumps(LORA_JOB))
        job["training"]["method"] = "lorax"
        with self.assertRaises(trainplan.InputError) as caught:
            trainplan.estimate(job)
        error = caught.exception
        self.assertIsInstance(error, ValueError)
        self.assertEqual(error.field, "training.method")
        self.assertEqual(error.value, "lorax")
        self.assertIn("lora", error.allowed)
        self.assertIn("training.method", str(error))

    def test_a_plan_field_is_named_by_its_path(self):
        with self.assertRaises(trainplan.InputError) as caught:
            trainplan.plan({**LORA_JOB, "plan": {"gpus_per_node": 0}})
        self.assertEqual(caught.exception.field, "plan.gpus_per_node")
        self.assertEqual(caught.exception.value, "0")

    def test_nan_is_refused_like_malformed_json(self):
        job = json.loads(json.dumps(LORA_JOB))
        job["training"]["tokens"] = float("nan")
        with self.assertRaises(trainplan.InputError) as caught:
            trainplan.estimate(job)
        self.assertEqual(caught.exception.field, "doc")

    def test_a_document_that_is_not_an_object(self):
        with self.assertRaises(trainplan.InputError):
            trainplan.estimate(["llama-3-8b"])


class SameAsTheApiTest(unittest.TestCase):
    PLAN = {**LORA_JOB, "plan": {"gpu": ["a100-80gb-sxm", "h100-sxm"], "max_gpus": 16, "deadline": "7d", "top": 3}}
    RECOMMEND = {"model": "llama-3-8b", "training": {"method": "lora", "tokens": 2e8},
                 "recommend": {"gpu": ["a100-80gb-sxm", "h100-sxm"], "max_gpus": 16, "usage": "once"}}

    @classmethod
    def setUpClass(cls):
        cls.server = Server().__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.server.__exit__(None, None, None)

    def test_estimate(self):
        status, answer = self.server.post("/api/estimate", LORA_JOB)
        self.assertEqual(status, 200)
        self.assertEqual(trainplan.estimate(LORA_JOB), answer)

    def test_plan(self):
        status, answer = self.server.post("/api/plan", self.PLAN)
        self.assertEqual(status, 200)
        mine = trainplan.plan(self.PLAN)
        self.assertEqual(mine.keys(), answer.keys())
        self.assertEqual(mine["search"].keys(), answer["search"].keys())
        self.assertTrue(mine["plans"])
        self.assertEqual(without_search_clock(mine), without_search_clock(answer))

    def test_recommend(self):
        status, answer = self.server.post("/api/recommend", self.RECOMMEND)
        self.assertEqual(status, 200)
        mine = trainplan.recommend(self.RECOMMEND)
        self.assertEqual(mine.keys(), answer.keys())
        self.assertTrue(mine["options"])
        self.assertEqual(mine, answer)

    def test_review(self):
        with open(os.path.join(os.environ["TRAINPLAN_SOURCE_DIR"], "examples/builds/guide-a.json")) as f:
            build = json.load(f)
        status, answer = self.server.post("/api/review", build)
        self.assertEqual(status, 200)
        self.assertEqual(trainplan.review(build), answer)

    def test_catalogs(self):
        self.assertEqual(trainplan.models(), self.server.get("/api/models"))
        self.assertEqual(trainplan.gpus(), self.server.get("/api/gpus"))

    def test_errors_carry_what_the_400_answer_names(self):
        for path, call, doc in [
            ("/api/estimate", trainplan.estimate, {**LORA_JOB, "hardware": {"gpu": "a100-80gb-sxm", "gpus": -1}}),
            ("/api/plan", trainplan.plan, {**LORA_JOB, "plan": {"objective": "fastest"}}),
            ("/api/recommend", trainplan.recommend, {**self.RECOMMEND, "recommend": {"region": "mars"}}),
            ("/api/review", trainplan.review, {"gpu": "h100-sxm", "gpus": 8, "cpu": "no-such-cpu"}),
        ]:
            with self.subTest(path=path):
                status, answer = self.server.post(path, doc)
                self.assertEqual(status, 400)
                with self.assertRaises(trainplan.InputError) as caught:
                    call(doc)
                error = caught.exception
                self.assertEqual({"code": error.code, "error": str(error), "field": error.field, "value": error.value,
                                  "allowed": error.allowed}, answer)


class ModuleTest(unittest.TestCase):
    def test_releases_the_interpreter_while_it_computes(self):
        # A second Python thread makes progress while a plan search runs in the module.
        ticks = []
        done = threading.Event()

        def tick():
            while not done.is_set():
                ticks.append(1)
                done.wait(0.001)

        ticker = threading.Thread(target=tick)
        ticker.start()
        try:
            before = len(ticks)
            trainplan.plan({**LORA_JOB, "plan": {"max_gpus": 64}})
            during = len(ticks) - before
        finally:
            done.set()
            ticker.join()
        self.assertGreater(during, 5)

    def test_exceptions_are_classes_of_the_module(self):
        self.assertTrue(issubclass(trainplan.InputError, ValueError))
        self.assertTrue(issubclass(trainplan.InternalError, RuntimeError))
        self.assertEqual(trainplan.InputError("x").field, "")
        self.assertRegex(trainplan.__version__, r"^\d+\.\d+\.\d+$")


class UserCatalogTest(unittest.TestCase):
    """use_catalogs() lays files over the built-in catalogs once per process, so each case runs a fresh one."""

    EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "catalog-t4-lab.json")

    def run_python(self, code):
        env = {**os.environ, "TRAINPLAN_NO_USER_CATALOG": "1"}
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)

    def test_a_user_gpu_is_estimated_like_the_cli_with_catalog(self):
        job = {**LORA_JOB, "training": {**LORA_JOB["training"], "precision": "fp16"},
               "hardware": {"gpu": "t4-lab", "gpus": 1}, "strategy": {}}
        out = self.run_python(
            "import json, trainplan; trainplan.use_catalogs([%r]); "
            "print(json.dumps(trainplan.estimate(%s)))" % (self.EXAMPLE, json.dumps(job)))
        self.assertEqual(out.returncode, 0, out.stderr)
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(job, f)
        try:
            expected = json.loads(subprocess.run(
                [BINARY, "--catalog", self.EXAMPLE, "estimate", f.name, "--json"], check=True, capture_output=True,
                text=True, env={**os.environ, "TRAINPLAN_NO_USER_CATALOG": "1"}).stdout)
        finally:
            os.unlink(f.name)
        self.assertEqual(json.loads(out.stdout), expected)

    def test_catalogs_named_after_the_first_call_are_refused(self):
        out = self.run_python(
            "import trainplan; trainplan.gpus()\n"
            "try:\n    trainplan.use_catalogs([%r])\nexcept trainplan.InputError as e:\n    print(e.field)" % self.EXAMPLE)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.strip(), "paths")


if __name__ == "__main__":
    unittest.main()
