"""The C extension needs libyaml's headers (Debian: libyaml-dev) and a C compiler."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "gen_yaml_accel",
            ["gen_yaml_accel.c"],
            libraries=["yaml"],
            extra_compile_args=["-O2", "-Wall", "-Wextra"],
        )
    ]
)
