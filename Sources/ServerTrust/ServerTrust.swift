// The challenge layer: being written (issue 4).
