"""Compare the real-model chapter's attention with Hugging Face transformers' BertModel.

Runs layer 0 of all-MiniLM-L6-v2 twice on one padded batch of :data:`SENTENCES`: with the
course's NumPy code (:func:`lib.pretrained.self_attention`, which calls
:func:`lib.attention.multi_head_attention`) and with transformers' ``BertModel``
(``attn_implementation="eager"``, the attention written out in PyTorch), and writes, per
head, the largest absolute difference of the attention probabilities and of the head's
output :math:`A_h V_h`, and the largest difference of the whole sublayer's output
:math:`\\operatorname{LN}(X + \\text{attention})`, together with the tolerances and the
versions of transformers, torch and NumPy, to ``lib/results/transformers_comparison.json``.
That file is package data of ``lib``: notebook 08 reads and shows it with
:func:`lib.pretrained.load_comparison`, without PyTorch.

Run it by hand, from the repository's root, after a change to ``lib/`` or to the pinned
versions of transformers or torch (it needs both, which are test-only dependencies; it
never touches the network, the model comes from the installed wheel)::

    .venv/bin/python scripts/compare_with_transformers.py

then regenerate notebook 08 (``make notebooks NB=notebooks/08_real_model.md``) and commit
the three files. ``tests/test_pretrained.py`` recomputes the comparison whenever
transformers is installed, and fails if the committed file is stale: other versions, or
numbers further than :data:`STALE_ATOL` from the recomputed ones.

The differences are rounding errors of float32, and rounding depends on the order of the
additions inside the matrix products, which OpenBLAS and PyTorch choose by thread count
and by processor (on this course's machine, one thread instead of two moved some
differences by about 2e-6, and OpenBLAS's kernels for another processor by a few 1e-6).
So the comparison runs on one thread, and the file records the ``machine``: the kernels
OpenBLAS selected for NumPy and PyTorch's CPU capability. The test allows the recomputed
numbers the spread that rounding gives across machines, :data:`STALE_ATOL`, and never
skips: a stale file fails on every machine.
"""

import importlib.metadata
import json
import os
import sys
from pathlib import Path

import numpy as np

from lib import pretrained

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "lib" / pretrained.COMPARISON_RESOURCE  # lib/results/...json
# Sentences of different lengths, so that the batch is padded; the first three are notebook
# 08's, the fourth is shorter than all of them.
SENTENCES = ("The cat sat on the mat.",
             "Attention lets every word in a sentence look at every other word.",
             "Paris is the capital of France.",
             "Hi!")
LAYER = 0
# Largest absolute difference allowed by tests/test_pretrained.py. The probabilities lie in
# [0, 1] and the outputs are of order 1 to 10; float32 carries about 7 significant digits.
TOLERANCE = {"probabilities": 1e-5, "head_output": 1e-5, "sublayer_output": 5e-5}
# How far a recomputed difference may be from the committed one before the file is stale:
# half of each tolerance, on every machine. The differences are float32 roundings, and they
# move with the CPU, the BLAS kernel and even the run (on one machine, 1.2e-7 between two
# pytest runs). Measured on an AMD EPYC under OpenBLAS's Haswell, Sandybridge and Katmai
# (OPENBLAS_CORETYPE=Prescott) kernels, NumPy's baseline SIMD and PyTorch's DEFAULT and
# AVX2 capabilities, the largest moves were 2.9e-6 (a head), 3.8e-6 (sublayer output) and
# 0 (embeddings). (SkylakeX's AVX-512 kernels cannot run on that CPU.)
STALE_ATOL = {"probabilities": 5e-6, "head_output": 5e-6, "sublayer_output": 2.5e-5,
              "embeddings": 5e-6}
VERSIONED = ("transformers", "torch", "numpy")


def versions():
    """The installed versions of the packages whose numbers the comparison depends on."""
    return {name: importlib.metadata.version(name) for name in VERSIONED}


def machine():
    """What decides the rounding besides the versions: NumPy's BLAS and the kernels it chose,
    PyTorch's CPU capability, and the number of threads :func:`compare` runs on."""
    import threadpoolctl
    import torch

    blas = [i for i in threadpoolctl.threadpool_info()
            if i["user_api"] == "blas" and "numpy" in i["filepath"]]
    numpy_blas = ", ".join(f"{i['internal_api']} {i.get('version')} "
                           f"({i.get('architecture', 'unknown')} kernels)" for i in blas)
    return {"numpy_blas": numpy_blas or "unknown",
            "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "threads": 1}


def transformers_layer(model, batch, layer=LAYER):
    """Run transformers' BertModel (eager attention, float32, CPU) on ``batch``.

    Returns a dict of float32 arrays: ``embeddings`` (N, L, D), the input of layer 0;
    ``probabilities`` (N, H, L, S) of ``layer``; ``heads`` (N, L, D), the heads' outputs
    side by side, before the output projection; ``sublayer_output`` (N, L, D), the output
    of the attention sublayer, LN(x + attention).
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    import transformers

    transformers.logging.disable_progress_bar()
    hf = transformers.BertModel.from_pretrained(
        str(model.path), local_files_only=True, attn_implementation="eager").eval()
    captured = {}

    def keep(name):
        def hook(module, args, out):
            captured[name] = out[0] if isinstance(out, tuple) else out
        return hook

    attention = hf.encoder.layer[layer].attention
    hooks = [hf.embeddings.register_forward_hook(keep("embeddings")),
             attention.self.register_forward_hook(keep("heads")),
             attention.register_forward_hook(keep("sublayer_output"))]
    try:
        with torch.no_grad():
            result = hf(input_ids=torch.from_numpy(batch.input_ids),
                        attention_mask=torch.from_numpy(batch.key_mask.astype(np.int64)),
                        output_attentions=True)
    finally:
        for hook in hooks:
            hook.remove()
    out = {name: t.numpy() for name, t in captured.items()}
    out["probabilities"] = result.attentions[layer].numpy()
    return out


def compare(model=None):
    """The comparison, as the dict that :func:`main` writes (see the module docstring)."""
    import threadpoolctl
    import torch

    model = pretrained.load_minilm(layers=[LAYER]) if model is None else model
    batch = pretrained.tokenize(model, SENTENCES)
    torch_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpoolctl.threadpool_limits(limits=1):  # NumPy's BLAS: one thread
            x = pretrained.embed(model, batch)  # (N, L, D)
            ours = pretrained.self_attention(model, x, batch.key_mask, layer=LAYER)
            ref = transformers_layer(model, batch)
    finally:
        torch.set_num_threads(torch_threads)
    H = model.num_heads
    proj = pretrained.projection_weights(model, LAYER)
    v_heads = pretrained.split_heads(x @ proj["w_v"] + proj["b_v"], H)  # (N, H, S, d)
    our_heads = ours.weights @ v_heads  # (N, H, L, d): head_h = A_h V_h
    ref_heads = pretrained.split_heads(ref["heads"], H)  # (N, H, L, d)
    assert ours.weights.shape == ref["probabilities"].shape
    assert our_heads.shape == ref_heads.shape and ours.output.shape == ref["sublayer_output"].shape
    d_probs = np.abs(ours.weights - ref["probabilities"]).max(axis=(0, 2, 3))  # (H,)
    d_heads = np.abs(our_heads - ref_heads).max(axis=(0, 2, 3))  # (H,)
    return {
        "description": ("Largest absolute difference between lib.pretrained (NumPy, the "
                        "course's kernel) and transformers' BertModel (eager attention) on "
                        "layer 0 of all-MiniLM-L6-v2, over one padded batch of the "
                        "sentences below: per head, of the attention probabilities and of "
                        "the head's output A_h V_h; and of the attention sublayer's output "
                        "LN(X + attention)."),
        "written_by": "scripts/compare_with_transformers.py",
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "weights_sha256": pretrained.WEIGHTS_SHA256,
        "layer": LAYER,
        "attn_implementation": "eager",
        "sentences": list(SENTENCES),
        "batch_shape": [int(n) for n in batch.input_ids.shape],
        "versions": versions(),
        "machine": machine(),
        "tolerance": dict(TOLERANCE),
        "heads": [{"head": h, "probabilities": float(d_probs[h]),
                   "head_output": float(d_heads[h])} for h in range(H)],
        "sublayer_output": float(np.abs(ours.output - ref["sublayer_output"]).max()),
        "embeddings": float(np.abs(x - ref["embeddings"]).max()),
    }


def dumps(result):
    """The file's text: indented JSON, keys in the order above, a final newline."""
    return json.dumps(result, indent=2) + "\n"


def main():
    result = compare()
    worst = {"probabilities": max(h["probabilities"] for h in result["heads"]),
             "head_output": max(h["head_output"] for h in result["heads"]),
             "sublayer_output": result["sublayer_output"]}
    over = {k: v for k, v in worst.items() if not v <= TOLERANCE[k]}
    if over:
        sys.exit(f"not written: differences above the tolerance {TOLERANCE}: {over}")
    RESULT.parent.mkdir(exist_ok=True)
    RESULT.write_text(dumps(result))
    print(f"wrote {RESULT.relative_to(ROOT)}: largest differences {worst}, "
          f"versions {result['versions']}")


if __name__ == "__main__":
    main()
