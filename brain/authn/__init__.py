"""Authenticity (§9): SSHSIG over snapshot bytes, signature records, trust roots, and the §9.7 decision.

Pure logic: nothing here touches the filesystem, a socket or a terminal. What the decision needs from a
brain (snapshots, compositions, provenance blocks, records) comes through the `ChainStore` protocol of
`brain.authn.chain`; the sidecar files live in `brain.store.authn_files`; signers live in `signers/`.
"""
