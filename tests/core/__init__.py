"""Tests of the contract: the core, registration, selectors, families, the conformance kit over every backend."""
