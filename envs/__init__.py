"""The Gymnasium side of nsrl, installed as ``nsrl.envs``."""
