# bash completion for clfilter: options, filter names (from --list-filters), devices and files.
# Installed to share/bash-completion/completions/clfilter; or: source scripts/clfilter-completion.bash
_clfilter() {
  local cur prev
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD-1]}
  case $prev in
    -f|--filter|--list-filters)
      COMPREPLY=($(compgen -W "$(clfilter --list-filters 2>/dev/null | sed -n 's/^\([a-z0-9_]*\) - .*/\1/p')" -- "$cur"))
      return ;;
    --device) COMPREPLY=($(compgen -W "gpu cpu $(clfilter --list-devices 2>/dev/null | sed -n 's/^\([0-9]*:[0-9]*\) .*/\1/p')" -- "$cur")); return ;;
    --variant) COMPREPLY=($(compgen -W "tiled direct" -- "$cur")); return ;;
    --queues) COMPREPLY=($(compgen -W "1 3" -- "$cur")); return ;;
    --plugin-dir|-o|--output-dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --tile|--strip-rows|--slots|--max-device-memory|--frames|-j|--jobs) return ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "--filter --device --variant --tile --strip-rows --slots --queues
      --max-device-memory --stats --trace --plugin-dir --verbose --quiet --help --version
      --list-filters --list-devices --output-dir --frames --jobs --zero-copy" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -o filenames -F _clfilter clfilter
