compile=1
