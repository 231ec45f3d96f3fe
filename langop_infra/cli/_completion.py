"""``langop-infra completion bash|zsh|fish``: a shell completion script on stdout.

    eval "$(langop-infra completion bash)"          # in ~/.bashrc
    eval "$(langop-infra completion zsh)"           # in ~/.zshrc (after compinit)
    langop-infra completion fish > ~/.config/fish/completions/langop-infra.fish

Completes subcommands, their options, the values of options with fixed choices, and
``--stack`` from the ``Pulumi.<stack>.yaml`` files in ``.`` and ``stacks/``. The scripts are
static: completing never starts Python.
"""

from __future__ import annotations

import argparse

from langop_infra.cli._output import emit

SHELLS = ("bash", "zsh", "fish")
STACK_GLOB = "Pulumi.*.yaml stacks/Pulumi.*.yaml"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shell", choices=SHELLS, help="the shell to complete in")


def run(args: argparse.Namespace) -> int:
    commands = command_options()
    script = {"bash": bash, "zsh": zsh, "fish": fish}[args.shell](commands)
    emit(script)
    return 0


Options = dict[str, dict[str, list[str]]]  # command -> option -> choices (empty: free value)


def command_options() -> Options:
    """Every subcommand's option strings and their choices, from the real parsers."""
    from langop_infra.cli.main import SUBCOMMANDS, build_parser

    parser = build_parser([], every=True)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found: Options = {}
    for name in SUBCOMMANDS:
        options: dict[str, list[str]] = {}
        for action in sub.choices[name]._actions:
            if action.help == argparse.SUPPRESS:
                continue  # a deprecated alias: not offered
            for flag in action.option_strings:
                if flag.startswith("--"):
                    options[flag] = [str(c) for c in action.choices or []]
            if not action.option_strings and action.choices:
                options[""] = [str(c) for c in action.choices]
        found[name] = options
    return found


_BASH_REPLY = 'COMPREPLY=($(compgen {} -- "$cur")); return;;'
_BASH_FIXED = (
    "      --stack|-s) " + _BASH_REPLY.format('-W "$(_langop_infra_stacks)"'),
    "      --config|--out|--project-dir|--lock) " + _BASH_REPLY.format("-f"),
)


def bash(commands: Options) -> str:
    cases = []
    for name, options in commands.items():
        flags = " ".join(sorted(o for o in options if o))
        words = f"{flags} {' '.join(options.get('', []))}".strip()
        lines = [f"    {name})", '      case "$prev" in']
        lines += [
            f"      {flag}) " + _BASH_REPLY.format(f'-W "{" ".join(choices)}"')
            for flag, choices in options.items()
            if flag and choices
        ]
        lines += [
            *_BASH_FIXED,
            "      esac",
            f'      COMPREPLY=($(compgen -W "{words}" -- "$cur"));;',
        ]
        cases.append("\n".join(lines))
    names = " ".join(commands)
    return f"""# bash completion for langop-infra (langop-infra completion bash)
_langop_infra_stacks() {{
  local f
  for f in {STACK_GLOB}; do
    [ -e "$f" ] || continue
    f=${{f##*/Pulumi.}}; f=${{f#Pulumi.}}; echo "${{f%.yaml}}"
  done
}}
_langop_infra() {{
  local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}"
  local command="${{COMP_WORDS[1]}}"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "{names} --help --version" -- "$cur")); return
  fi
  case "$command" in
{chr(10).join(cases)}
  esac
}}
complete -o default -F _langop_infra langop-infra
"""


def zsh(commands: Options) -> str:
    from langop_infra.cli.main import SUBCOMMANDS

    described = "\n".join(
        f"    '{name}:{SUBCOMMANDS[name].help.replace(chr(39), '')}'" for name in commands
    )
    cases = []
    for name, options in commands.items():
        specs = []
        for flag, choices in sorted(options.items()):
            if not flag:
                continue
            if flag == "--stack":
                specs.append("'--stack[stack name]:stack:_langop_infra_stacks'")
            elif choices:
                specs.append(f"'{flag}:value:({' '.join(choices)})'")
            else:
                specs.append(f"'{flag}'")
        if options.get(""):
            specs.append(f"'1:value:({' '.join(options[''])})'")
        specs.append("'*:file:_files'")
        cases.append(f"    {name}) _arguments {' '.join(specs)} ;;")
    return f"""#compdef langop-infra
# zsh completion for langop-infra (langop-infra completion zsh)
_langop_infra_stacks() {{
  local -a files
  files=(Pulumi.*.yaml(N) stacks/Pulumi.*.yaml(N))
  files=(${{files##*Pulumi.}})
  compadd -- ${{files%.yaml}}
}}
_langop_infra() {{
  local -a commands
  commands=(
{described}
  )
  if (( CURRENT == 2 )); then
    _describe 'command' commands
    return
  fi
  case "$words[2]" in
{chr(10).join(cases)}
  esac
}}
compdef _langop_infra langop-infra
"""


def fish(commands: Options) -> str:
    from langop_infra.cli.main import SUBCOMMANDS

    lines = [
        "# fish completion for langop-infra (langop-infra completion fish)",
        "function __langop_infra_stacks",
        f"    for f in {STACK_GLOB}",
        "        string replace -r '.*Pulumi\\.(.*)\\.yaml$' '$1' $f",
        "    end",
        "end",
        "complete -c langop-infra -f",
    ]
    names = " ".join(commands)
    for name in commands:
        text = SUBCOMMANDS[name].help.replace("'", "")
        lines.append(
            f"complete -c langop-infra -n 'not __fish_seen_subcommand_from {names}' "
            f"-a {name} -d '{text}'"
        )
    for name, options in commands.items():
        when = f"-n '__fish_seen_subcommand_from {name}'"
        for flag, choices in sorted(options.items()):
            if not flag:
                if choices:
                    lines.append(f"complete -c langop-infra {when} -a '{' '.join(choices)}'")
                continue
            extra = ""
            if flag == "--stack":
                extra = " -x -a '(__langop_infra_stacks)'"
            elif choices:
                extra = f" -x -a '{' '.join(choices)}'"
            lines.append(f"complete -c langop-infra {when} -l {flag[2:]}{extra}")
    return "\n".join(lines) + "\n"
