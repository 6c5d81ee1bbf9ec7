import torch
from torch.utils.data import DataLoader

def train(model, ds, opt):    total = 0
    for x, y in DataLoader(ds):
        loss = model(x).sum()        loss.backward()
        opt.step()
        total += loss        torch.cuda.empty_cache()
    return total
