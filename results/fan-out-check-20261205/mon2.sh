#!/bin/bash
# sample one pid every second: state, wchan, descriptors, children, utime+stime ticks
p=$1; out=$2
while [ -d /proc/$p ]; do
  read -r st ut stt < <(awk '{print $3, $14, $15}' /proc/$p/stat 2>/dev/null)
  nfd=$(ls /proc/$p/fd 2>/dev/null | wc -l)
  echo "$(date +%T) st=$st cpu=$((ut+stt)) fds=$nfd wchan=$(cat /proc/$p/wchan 2>/dev/null) kids=$(ls /proc/$p/task/$p/children >/dev/null 2>&1 && wc -w < /proc/$p/task/$p/children)"
  sleep 1
done > $out
