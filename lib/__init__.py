"""The course's code: the attention kernel (`lib.attention`) and figure helpers (`lib.figures`)."""
