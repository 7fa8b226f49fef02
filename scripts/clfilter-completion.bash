# bash completion for clfilter. The words come from clfilter itself (`clfilter --complete WORD`,
# made from the option table in cli/options.cpp): options, their choices, filter names, devices;
# then directories or files. Installed to share/bash-completion/completions/clfilter; or:
# source scripts/clfilter-completion.bash
_clfilter() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} words
  words=$("${COMP_WORDS[0]}" --complete "$prev" 2>/dev/null)
  case $words in
    @directories) COMPREPLY=($(compgen -d -- "$cur")) ;;
    @none) COMPREPLY=() ;;
    ?*) COMPREPLY=($(compgen -W "$words" -- "$cur")) ;;
    *)
      if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" --complete - 2>/dev/null)" -- "$cur"))
      else
        COMPREPLY=($(compgen -f -- "$cur"))
      fi ;;
  esac
}
complete -o filenames -F _clfilter clfilter
