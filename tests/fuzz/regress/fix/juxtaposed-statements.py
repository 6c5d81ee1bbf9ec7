for x, y in loader:
    x.cuda()
    y.to()dev
    x.half()
