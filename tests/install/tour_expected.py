#!/usr/bin/env python3
"""What tests/install/consumer/tour.c must print, from the installed hipstack-smi's JSON (the C++
API's path): one line per GPU (partitions, process ids, health verdict and finding count), the link
count, and no events at a first look at a recorded capture.
  tour_expected.py HIPSTACK_SMI SYSFS_ROOT PROCFS_ROOT"""
import json
import subprocess
import sys

smi, sysfs, procfs = sys.argv[1:4]


def query(*command):
    out = subprocess.run([smi, *command, "--json", "--sysfs-root", sysfs, "--procfs-root", procfs],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


processes = {d["index"]: [str(p["pid"]) for p in d["processes"]] for d in query("process")["devices"]}
health = {d["index"]: d for d in query("health")["devices"]}
for device in query("list")["devices"]:
    i = device["index"]
    print(f"device {i} {device['bdf']} partitions {device['partitions']} processes {len(processes.get(i, []))} "
          f"pids {','.join(processes.get(i, []))} health {health[i]['overall']} findings {len(health[i]['findings'])}")
print(f"links {len(query('topology')['links'])}")
print("events 0")
