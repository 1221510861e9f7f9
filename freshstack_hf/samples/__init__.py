"""Small topics made by the project itself, for the demo, tests, benchmarks and quick CPU evaluation.

* `demo_topic`: the demo's offline topic (installed libraries as the corpus, `demo_data/` as its Stack Exchange dump);
* `synth`: deterministic synthetic topics with FreshStack's shapes;
* `nano`: Nano subsets, small copies of each real topic (after NanoCodeRAG / NanoBEIR).
"""
