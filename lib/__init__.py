"""The course's code: the attention kernel a student reads (`lib.attention`) and its
argument checking (`lib._checks`), the threaded fast path it dispatches to for large inputs
(`lib.fast_attention`), figure helpers (`lib.figures`), the source notes' toy matrices
(`lib.data`), the loader of the pretrained model of chapter 8 (`lib.pretrained`), and the
backward pass and training loop of chapter 9 (`lib.training`)."""
