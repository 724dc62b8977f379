"""The course's code: the attention kernel (`lib.attention`), figure helpers
(`lib.figures`), the source notes' toy matrices (`lib.data`) and the loader of the
pretrained model of the last chapter (`lib.pretrained`)."""
