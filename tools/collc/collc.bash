# bash completion for collc: its commands, then the flags and values that
# `collc [COMMAND] --help` lists, so that completion follows collc's options.

# Prints each flag of `$1 $2 --help` (collc's own when $2 is empty), and
# each value of a flag that takes one of a fixed set as flag=value.
_collc_flags() {
  "$1" $2 --help 2>/dev/null | awk '
    /^ *--?[a-zA-Z]/ {
      flag = $1; sub(/[=<].*/, "", flag); print flag
      enum = ($1 ~ /=<value>$/) ? flag : ""; next
    }
    enum != "" && /^ *=[a-zA-Z0-9_.:-]+/ { print enum $1; next }
    { enum = "" }'
}

_collc() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  local commands="run sim viz tune bound synth" command="" flag=""
  if ((COMP_CWORD > 1)) && [[ " $commands " == *" ${COMP_WORDS[1]} "* ]]; then
    command=${COMP_WORDS[1]}
  fi
  # bash splits --flag=value into three words: --flag, =, value.
  if [[ $cur == = ]]; then
    flag=$prev cur=""
  elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
    flag=${COMP_WORDS[COMP_CWORD - 2]}
  fi
  if [[ -n $flag ]]; then
    local values
    values=$(_collc_flags "${COMP_WORDS[0]}" "$command" | sed -n "s/^$flag=//p")
    COMPREPLY=($(compgen -W "$values" -- "$cur"))
  elif [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_collc_flags "${COMP_WORDS[0]}" "$command" | grep -v =)" \
      -- "$cur"))
  else
    ((COMP_CWORD == 1)) && COMPREPLY=($(compgen -W "$commands" -- "$cur"))
    COMPREPLY+=($(compgen -f -X '!*.coll' -- "$cur") $(compgen -d -S / -- "$cur"))
  fi
}
complete -F _collc collc
