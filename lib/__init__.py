"""The course's code: the attention kernel a student reads (`lib.attention`), the threaded
fast path it dispatches to for large inputs (`lib.fast_attention`), figure helpers
(`lib.figures`), the source notes' toy matrices (`lib.data`) and the loader of the
pretrained model of the last chapter (`lib.pretrained`)."""
