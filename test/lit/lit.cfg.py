# lit configuration for collc: FileCheck tests of the dialect, the front end,
# the verifier and the driver.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "collc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".coll", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.collc_obj_root, "test", "lit")

llvm_config.with_system_environment(["HOME", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

config.substitutions.append(("%examples", os.path.join(config.collc_src_root, "examples")))
tool_dirs = [config.collc_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["collc", "collc-launch", "collc-opt", "collc-perf", "collc-translate"], tool_dirs)
llvm_config.add_tool_substitutions(["FileCheck", "not", "count"], [config.llvm_tools_dir])
