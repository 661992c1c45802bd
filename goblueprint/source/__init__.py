"""Source blueprints: the scheduler's state machines, call paths and contracts from GOROOT.

A small Go helper (``gohelper/``, built with the bundled toolchain on first use)
parses and type-checks a package and emits plain JSON facts; everything else
(transition resolution, verification, call paths, diffs) is Python over those
facts.  Modules:

* :mod:`.helper`   - build and run the Go helper
* :mod:`.facts`    - find a GOROOT, load (and cache) its facts
* :mod:`.tables`   - protocol knowledge: machines, mechanisms, wrappers' shapes
* :mod:`.operands` - evaluate the helper's operand trees to constants
* :mod:`.states`   - status transitions with evidence
* :mod:`.calls`    - call graph over Go calls, closures and assembly
* :mod:`.diagram`  - Mermaid diagram reader; :mod:`.verify` judges it
* :mod:`.diff`     - differences between two releases
* :mod:`.render_statemachine` - Mermaid, DOT, SVG and Markdown writers
"""
