"""Whole-document rules over validated specs: references, clashes, admission, egress and
the other checks that need more than one field. Each returns problems; none registers."""
