#!/usr/bin/env python3
"""The Python baseline for gsm8k_eval_bench: the pattern of common Python eval scripts
(urllib.request + ThreadPoolExecutor, standard library only) sending every prompt to
/v1/completions. Prints one JSON line: requests, ok, wall_s, cpu_s (process CPU of all
threads, measured around the request loop only, like the C++ side)."""
import argparse
import json
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", required=True, help="base URL, e.g. http://127.0.0.1:30000")
    parser.add_argument("--model", required=True)
    parser.add_argument("--prompts", required=True, help='JSONL file of {"prompt": ...}')
    parser.add_argument("--workers", type=int, default=64)
    parser.add_argument("--max-tokens", type=int, default=512)
    args = parser.parse_args()

    with open(args.prompts, encoding="utf-8") as f:
        prompts = [json.loads(line)["prompt"] for line in f if line.strip()]
    endpoint = args.url.rstrip("/") + "/v1/completions"

    def ask(prompt):
        body = json.dumps({"model": args.model, "prompt": prompt, "max_tokens": args.max_tokens,
                           "temperature": 0, "top_p": 1, "seed": 1234,
                           "stop": ["Question:", "\n\nQuestion"]}).encode()
        request = urllib.request.Request(endpoint, data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=600) as response:
            return json.loads(response.read())["choices"][0]["text"]

    cpu_start, wall_start = time.process_time(), time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        texts = list(pool.map(ask, prompts))
    wall, cpu = time.perf_counter() - wall_start, time.process_time() - cpu_start
    print(json.dumps({"format_version": 1, "requests": len(prompts),
                      "ok": sum(isinstance(t, str) for t in texts), "wall_s": wall, "cpu_s": cpu}))


if __name__ == "__main__":
    main()
